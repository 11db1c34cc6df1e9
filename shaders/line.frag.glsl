#version 330 core
#include "lighting.glsl"
in vec4 v_color;
out vec4 f_color;

void main() {
    f_color = display(v_color.rgb, v_color.a);
}

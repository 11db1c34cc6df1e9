#version 330 core
// Background gradient by view direction (it turns with the camera): zenith → horizon → a
// darker haze below the horizon, which the floor's fog fades into. Colours are given already
// gamma-encoded (display space), so the gradient costs a few instructions per pixel.
#include "lighting.glsl"
#include "walls.glsl"
uniform vec3 u_zenith;
uniform vec3 u_horizon;
uniform vec3 u_nadir;
in vec3 v_direction;
out vec4 f_color;

void main() {
    float y = v_direction.y * inversesqrt(dot(v_direction, v_direction));
    vec3 c = y > 0.0 ? mix(u_horizon, u_zenith, sqrt(y)) : mix(u_horizon, u_nadir, sqrt(-y));
    f_color = through_walls(vec4(c, 1.0), u_eye + v_direction);  // the far plane's point
}

#version 330 core
// Wide lines (GL 3.3 core only has 1 px lines): each segment becomes a quad u_width pixels
// wide in screen space, so the trail reads the same at any zoom.
layout(lines) in;
layout(triangle_strip, max_vertices = 4) out;
uniform vec2 u_viewport;   // width, height, px
uniform float u_width;     // px
in vec4 g_color[];
out vec4 v_color;

void main() {
    vec4 a = gl_in[0].gl_Position;
    vec4 b = gl_in[1].gl_Position;
    if (a.w <= 0.0 || b.w <= 0.0) return;  // a segment reaching behind the eye: skip it
    vec2 along = (b.xy / b.w - a.xy / a.w) * u_viewport;
    vec2 side = vec2(-along.y, along.x) / max(length(along), 1e-6) * u_width / u_viewport;
    v_color = g_color[0];
    gl_Position = a + vec4(side * a.w, 0.0, 0.0);
    EmitVertex();
    gl_Position = a - vec4(side * a.w, 0.0, 0.0);
    EmitVertex();
    v_color = g_color[1];
    gl_Position = b + vec4(side * b.w, 0.0, 0.0);
    EmitVertex();
    gl_Position = b - vec4(side * b.w, 0.0, 0.0);
    EmitVertex();
    EndPrimitive();
}

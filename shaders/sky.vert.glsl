#version 330 core
// Background: one triangle covering the screen at the far plane (no vertex buffer: positions
// from gl_VertexID), drawn after the opaque scene so only uncovered pixels are shaded.
uniform mat4 u_inverse_vp;   // clip → world
uniform vec3 u_eye;
out vec3 v_direction;        // view ray, world (not unit: on the far plane it is linear in
                             // screen space, so interpolating it is exact)

void main() {
    vec2 ndc = vec2((gl_VertexID == 1) ? 3.0 : -1.0, (gl_VertexID == 2) ? 3.0 : -1.0);
    vec4 far = u_inverse_vp * vec4(ndc, 1.0, 1.0);
    v_direction = far.xyz / far.w - u_eye;
    gl_Position = vec4(ndc, 1.0, 1.0);
}

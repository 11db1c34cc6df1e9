#version 330 core
// Balls and ellipsoids as impostors (centre-of-mass markers, contact dots, inertia ellipsoids):
// one camera-facing quad per instance around its outline; ellipsoid.frag.glsl
// intersects each pixel's view ray with the exact ellipsoid. Two triangles instead of the 20–320
// of a tessellated sphere: llvmpipe's cost is mostly per triangle, and the surface is smooth
// at any size.
#include "lighting.glsl"
uniform mat4 u_vp;
in vec2 in_corner;          // quad corner (±1, ±1)
in mat3 i_rotation;         // columns: the ellipsoid's axes in world
in vec3 i_scale;            // semi-axes, m, > 0
in vec3 i_offset;           // centre, world, m
in vec4 i_color;            // linear RGB, alpha
out vec3 v_position;        // on the quad, world
flat out mat3 v_rotation;
flat out vec3 v_scale;
flat out vec3 v_centre;
flat out vec4 v_color;

void main() {
    float r = max(i_scale.x, max(i_scale.y, i_scale.z));
    vec3 to_eye = u_eye - i_offset;
    float d = length(to_eye);
    vec3 forward = to_eye / max(d, 1e-30);
    vec3 helper = abs(forward.y) < 0.99 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0);
    vec3 right = normalize(cross(helper, forward));
    vec3 up = cross(forward, right);
    // the quad lies on the plane that touches the bounding sphere in front (d − r from the
    // eye), so the depth test runs before shading and the shell is drawn over its body. The
    // ellipsoid reaches sqrt(uᵀ R S² Rᵀ u) from the eye-centre line along a unit direction u
    // (its support function), and every point of it is at least as far as that plane, so it
    // projects onto the plane within that reach. An eye within r of the centre gets an empty
    // quad (nothing to see from in there).
    mat3 to_local = transpose(i_rotation);
    vec2 reach = vec2(length(i_scale * (to_local * right)), length(i_scale * (to_local * up)));
    vec2 half_size = d > 1.0001 * r ? reach : vec2(0.0);
    v_position = i_offset + forward * r + right * (in_corner.x * half_size.x)
               + up * (in_corner.y * half_size.y);
    v_rotation = i_rotation;
    v_scale = i_scale;
    v_centre = i_offset;
    v_color = i_color;
    gl_Position = u_vp * vec4(v_position, 1.0);
}

#version 330 core
// Floor: shadowed, lit, with an anti-aliased grid (0.25 m and 1 m lines, each fading out before
// its cells get small enough to alias) and fog towards the background's horizon colour.
#include "lighting.glsl"
#include "shadow.glsl"
#include "walls.glsl"
uniform vec3 u_floor_color;
uniform vec3 u_horizon;      // linear RGB
uniform vec2 u_fog;          // fog start, end distance, m
uniform vec3 u_floor_depth;  // window depth of the floor at pixel (x, y): A x + B y + C
                             // (written by the whole floor's programs, NO_SHADOWS)
in vec3 v_position;
in vec3 v_shadow;
out vec4 f_color;

void main() {
#ifdef NO_SHADOWS
    // the whole floor's exact depth, whatever its clipped triangles (renderer.floor_depth)
    gl_FragDepth = dot(vec3(gl_FragCoord.xy, 1.0), u_floor_depth);
#endif
#ifdef DEPTH_ONLY
    // the floor's depth alone (Renderer.cache_background in the window): blended away
    f_color = vec4(0.0);
#else
    vec2 q = v_position.xz * 4.0;                   // in minor cells (0.25 m)
    vec2 w = max(fwidth(q), vec2(1e-6));            // cells per pixel
    vec2 minor = abs(fract(q - 0.5) - 0.5) / w;     // distance to a line, px
    vec2 major = abs(fract(0.25 * q - 0.5) - 0.5) / (0.25 * w);
    float cell = max(w.x, w.y);
    float grid = 0.3 * (1.0 - clamp(min(minor.x, minor.y), 0.0, 1.0))
                     * (1.0 - smoothstep(0.05, 0.25, cell))
               + 0.45 * (1.0 - clamp(min(major.x, major.y) / 1.3, 0.0, 1.0))
                      * (1.0 - smoothstep(0.2, 1.0, cell));
    // matte: the sky ambient from straight above plus the sun, no highlight
    vec3 c = u_floor_color * (1.0 - grid)
           * (u_sky_ambient + u_light_color * (u_light_dir.y * shadow_lit(v_shadow)));
    float fog = smoothstep(u_fog.x, u_fog.y, distance(v_position, u_eye));
    f_color = through_walls(display(mix(c, u_horizon, fog), 1.0), v_position);
#endif
}

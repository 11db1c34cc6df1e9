// Shadows from the directional light's depth map (include after lighting.glsl). A vertex
// shader calls shadow_coords(); the fragment shader passes the interpolated result to
// shadow_lit(). The light is orthographic, so the coordinates are affine in the position and
// interpolating them is exact — and it saves a matrix product per pixel on llvmpipe.
uniform sampler2DShadow u_shadow_map;  // depth compare (<=) with linear filtering: 2×2 PCF per tap
uniform mat4 u_light_vp;               // world → light clip space (orthographic)
uniform float u_shadow_texel;          // world size of one shadow-map texel, m
uniform int u_shadows;                 // 0: everything lit

// Shadow-map coordinates (0…1) and depth of world point p with unit normal n. Normal-offset
// lookup (D. Holbein, "Normal Offset Shadows", 2011): move the point out along the normal, more
// where the surface grazes the light; this removes acne without a large depth bias (which
// would detach shadows from their casters).
vec3 shadow_coords(vec3 p, vec3 n) {
    float ndl = clamp(dot(n, u_light_dir), 0.0, 1.0);
    vec3 q = p + n * (u_shadow_texel * (1.0 + 2.0 * (1.0 - ndl)));
    return (u_light_vp * vec4(q, 1.0)).xyz * 0.5 + 0.5;
}

// 1 = lit, 0 = in shadow, soft in between, at shadow-map coordinates s. Points outside the map
// read its empty border (the light frustum has a margin) and the depth is capped at the far
// plane, so they come out lit without a branch (llvmpipe runs both sides of a branch anyway).
// Two taps 1.2 texels either side, each a hardware 2×2 compare: a soft edge ~3 texels wide.
// The map is ≤ 1024² because every tap costs memory bandwidth on a software renderer.
float shadow_lit(vec3 s) {
#ifdef NO_SHADOWS
    return 1.0;  // a variant for surfaces known to be outside the map (the far floor)
#else
    vec2 t = vec2(0.85, 0.85) / vec2(textureSize(u_shadow_map, 0));
    float z = min(s.z - 0.0004, 1.0);
    float lit = 0.5 * (texture(u_shadow_map, vec3(s.xy + t, z))
                       + texture(u_shadow_map, vec3(s.xy - t, z)));
    return u_shadows == 0 ? 1.0 : lit;
#endif
}

// Lighting shared by the body, floor and gizmo programs (moderngl pastes it in where a program
// includes it: ctx.includes, set by the Renderer). Linear RGB; display() does the gamma.
uniform vec3 u_eye;             // camera position, world, m
uniform vec3 u_light_dir;       // unit vector towards the directional light ("sun")
uniform vec3 u_light_color;     // light intensity, linear RGB
uniform vec3 u_sky_ambient;     // hemisphere ambient arriving from above, linear RGB
uniform vec3 u_ground_ambient;  // ... from below (light bounced off the floor)

// Hemisphere ambient: a soft, directional fill (normals facing up see the sky colour).
vec3 hemisphere(vec3 n) {
    return mix(u_ground_ambient, u_sky_ambient, 0.5 + 0.5 * n.y);
}

// Lambert + normalised Blinn-Phong from the sun, scaled by `lit` (1 = no shadow), plus the
// hemisphere ambient. n: unit normal; p: world position.
vec3 shade(vec3 albedo, vec3 n, vec3 p, float lit, float shininess, float specular) {
    vec3 v = normalize(u_eye - p);
    float ndl = max(dot(n, u_light_dir), 0.0);
    vec3 h = normalize(u_light_dir + v);
    // (s + 8) / 8π keeps the highlight's energy constant as it narrows (Blinn-Phong normalisation)
    float spec = specular * (shininess + 8.0) / 25.1327 * pow(max(dot(n, h), 0.0), shininess);
    return albedo * hemisphere(n) + (albedo + spec) * u_light_color * (ndl * lit);
}

// Linear → display: a soft shoulder above 0.8 instead of a hard clip, then the sRGB encoding
// (the framebuffer is not sRGB) by I. Taylor's fit from square roots, within 0.5 % of sRGB and
// ~10 % cheaper per frame than pow() on llvmpipe.
vec4 display(vec3 c, float alpha) {
    vec3 over = max(c - 0.8, 0.0);
    c = clamp(min(c, 0.8) + 0.2 * over / (over + 0.2), 0.0, 1.0);
    vec3 s1 = sqrt(c);
    vec3 s2 = sqrt(s1);
    vec3 s3 = sqrt(s2);
    return vec4(0.585122381 * s1 + 0.783140355 * s2 - 0.368262736 * s3, alpha);
}

// Gizmo surfaces (arrows, balls, ellipsoids; gizmo, arrow and ellipsoid programs): lit like the
// bodies but unshadowed; a translucent one (alpha < 1: the inertia ellipsoid) gets denser
// towards its outline, so its shape reads while the body shows through.
vec4 gizmo_shade(vec4 color, vec3 n, vec3 p) {
    vec3 c = shade(color.rgb, n, p, 1.0, 32.0, 0.35);
    float facing = abs(dot(n, normalize(u_eye - p)));
    float alpha = color.a < 1.0 ? mix(color.a, 1.0, 0.6 * pow(1.0 - facing, 3.0)) : 1.0;
    return display(c, alpha);
}

// Lighting shared by the body, floor and gizmo programs (moderngl pastes it in where a program
// includes it: ctx.includes, set by the Renderer). Linear RGB; display() does the gamma.
uniform vec3 u_eye;             // camera position, world, m
uniform vec3 u_light_dir;       // unit vector towards the directional light ("sun")
uniform vec3 u_light_color;     // light intensity, linear RGB
uniform vec3 u_sky_ambient;     // hemisphere ambient arriving from above, linear RGB
uniform vec3 u_ground_ambient;  // ... from below (light bounced off the floor)

// x^s, by products for the shininesses the shaders use (llvmpipe's pow is an exp2 and a log2
// a pixel, ~6 % of the bodies' shading): s is a constant where they call it, so the choice
// folds away when the shader is compiled.
float highlight_power(float x, float s) {
    float x2 = x * x;
    float x4 = x2 * x2;
    float x8 = x4 * x4;
    float x16 = x8 * x8;
    float x32 = x16 * x16;
    return s == 48.0 ? x32 * x16 : s == 32.0 ? x32 : pow(x, s);
}

// Lambert + normalised Blinn-Phong from the sun, scaled by `lit` (1 = no shadow), plus a
// hemisphere ambient (a soft, directional fill: normals facing up see the sky colour), from the
// unit normal's dot products: `dots` = (n·light, n·half vector, n·up).
vec3 shade_dots(vec3 albedo, vec3 dots, float lit, float shininess, float specular) {
    // (s + 8) / 8π keeps the highlight's energy constant as it narrows (Blinn-Phong normalisation)
    float spec = specular * (shininess + 8.0) / 25.1327
               * highlight_power(max(dots.y, 0.0), shininess);
    vec3 ambient = mix(u_ground_ambient, u_sky_ambient, 0.5 + 0.5 * dots.z);
    return albedo * ambient + (albedo + spec) * u_light_color * (max(dots.x, 0.0) * lit);
}

// The half vector between the light and the view from world position p.
vec3 half_vector(vec3 p) {
    return normalize(u_light_dir + normalize(u_eye - p));
}

// shade_dots for the unit normal n at world position p.
vec3 shade(vec3 albedo, vec3 n, vec3 p, float lit, float shininess, float specular) {
    return shade_dots(albedo, vec3(dot(n, u_light_dir), dot(n, half_vector(p)), n.y), lit,
                      shininess, specular);
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

const float GIZMO_SHININESS = 32.0;  // the gizmos' highlight (gizmo_shade, arrow.frag.glsl)
const float GIZMO_SPECULAR = 0.35;

// Gizmo surfaces (arrows, balls, ellipsoids; gizmo, arrow and ellipsoid programs): lit like the
// bodies but unshadowed; a translucent one (alpha < 1: the inertia ellipsoid) gets denser
// towards its outline, so its shape reads while the body shows through.
vec4 gizmo_shade(vec4 color, vec3 n, vec3 p) {
    vec3 c = shade(color.rgb, n, p, 1.0, GIZMO_SHININESS, GIZMO_SPECULAR);
    float rim = 1.0 - abs(dot(n, normalize(u_eye - p)));
    // (llvmpipe evaluates both sides of the choice: a product, not pow)
    float alpha = color.a < 1.0 ? mix(color.a, 1.0, 0.6 * rim * rim * rim) : 1.0;
    return display(c, alpha);
}

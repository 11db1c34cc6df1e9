// The container's translucent glass walls, applied by each opaque surface to its own colour
// (include after lighting.glsl): the walls the view ray from the eye to the surface point
// crosses tint it as blending the wall over it would, the far wall first, then the near one.
// No pass of their own: on llvmpipe the walls' two blended passes over the container's whole
// footprint were a third of the 3D view's time (docs/architecture.md, "From a dropped file to
// the screen").
uniform vec4 u_container;   // half width x, height y, half depth z of the walls, m; w 1 = walls
uniform vec3 u_wall_color;  // display RGB

// A wall's opacity where a view ray of length `length_d` meets it, `along` being the ray's
// component along the wall's normal: a faint tint that thickens at grazing angles.
float wall_alpha(float along, float length_d) {
    float grazing = 1.0 - abs(along) / length_d;
    return 0.06 + 0.14 * grazing * grazing * grazing;
}

// `c` (display colour, alpha) of the opaque surface at world point p seen through the walls.
// The box is x, z in ±half size, y in 0…height; its bottom is the floor, not a wall.
vec4 through_walls(vec4 c, vec3 p) {
#ifdef NO_WALLS
    return c;  // a variant for pixels whose rays miss the container (Renderer._wall_pixels)
#else
    vec3 d = p - u_eye;
    vec3 inv = 1.0 / d;
    vec3 lo = vec3(-u_container.x, 0.0, -u_container.z);
    vec3 t0 = (lo - u_eye) * inv;
    vec3 t1 = (u_container.xyz - u_eye) * inv;
    vec3 near = min(t0, t1);
    vec3 far = max(t0, t1);
    float enter = max(max(near.x, near.y), near.z);
    float leave = min(min(far.x, far.y), far.z);
    float length_d = length(d);
    bool crosses = u_container.w > 0.5 && enter < leave;
    // through the far wall: the ray leaves the box before p (not through the floor: going down)
    float along_far = leave == far.x ? d.x : (leave == far.y ? d.y : d.z);
    bool far_wall = crosses && leave > 0.0 && leave < 1.0 && !(leave == far.y && d.y < 0.0);
    // through the near wall: it enters the box before p, ahead of the eye (not from below)
    float along_near = enter == near.x ? d.x : (enter == near.y ? d.y : d.z);
    bool near_wall = crosses && enter > 0.0 && enter < 1.0 && !(enter == near.y && d.y > 0.0);
    float a_far = far_wall ? wall_alpha(along_far, length_d) : 0.0;
    float a_near = near_wall ? wall_alpha(along_near, length_d) : 0.0;
    vec3 rgb = mix(mix(c.rgb, u_wall_color, a_far), u_wall_color, a_near);
    return vec4(rgb, c.a);
#endif
}

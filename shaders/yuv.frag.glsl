#version 330 core
// A rendered frame (RGB, display-encoded, rows bottom-up) → Y'CbCr 4:2:0 as H.264's yuv420p
// wants it, packed for ONE readback: a single-channel target of w × 3h/2 whose rows 0…h−1 are
// the Y plane and rows h…3h/2−1 hold the Cb plane (left half) and the Cr plane (right half),
// image rows top first. BT.601 limited range (ITU-R BT.601-7 §2.5.3: Y 16…235, Cb/Cr 16…240),
// the matrix swscale uses for yuv420p by default; chroma is the mean of its 2×2 block.
uniform sampler2D u_image;
uniform ivec2 u_size;        // w, h of the frame (both even)
out float f_value;

vec3 rgb(int x, int image_row) {
    return texelFetch(u_image, ivec2(x, u_size.y - 1 - image_row), 0).rgb;
}

void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);  // row p.y of the packed planes, top first after readback
    if (p.y < u_size.y) {
        f_value = (16.0 + dot(rgb(p.x, p.y), vec3(65.481, 128.553, 24.966))) / 255.0;
        return;
    }
    int half_width = u_size.x / 2;
    bool cr = p.x >= half_width;
    ivec2 c = ivec2(cr ? p.x - half_width : p.x, p.y - u_size.y);  // chroma sample
    vec3 mean = 0.25 * (rgb(2 * c.x, 2 * c.y) + rgb(2 * c.x + 1, 2 * c.y)
                        + rgb(2 * c.x, 2 * c.y + 1) + rgb(2 * c.x + 1, 2 * c.y + 1));
    vec3 weights = cr ? vec3(112.0, -93.786, -18.214) : vec3(-37.797, -74.203, 112.0);
    f_value = (128.0 + dot(mean, weights)) / 255.0;
}

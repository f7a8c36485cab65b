//! The kernels' swizzle against the algebra's own `Swizzle::apply`, over the whole domain
//! of each instance the kernels use.
use layout_viz::kernel_fns;
use layout_viz::swizzle::Swizzle;

#[test]
fn kernel_swizzle_equals_algebra_swizzle() {
    for (b, m, s) in kernel_fns::supported_swizzles() {
        let sw = Swizzle::new(b, m, s as i32);
        // Two periods, so bits above the pattern are seen to pass through.
        for o in 0..(2u64 << (b + m + s)) {
            let ours = kernel_fns::swizzle(b, m, s, o).unwrap();
            assert_eq!(
                ours as i64,
                sw.apply(o as i64),
                "Swizzle<{b},{m},{s}> at {o}"
            );
        }
    }
}

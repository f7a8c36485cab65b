//! Each atom's CuTe notation, read back by the algebra, is the same map as the atom:
//! (thread, value) -> column-major index `row + rows * col` of its tile.
use layout_viz::atoms;
use layout_viz::notation::parse_layout;

#[test]
fn cute_notation_evaluates_like_the_atom() {
    for name in [
        "mma-m16n8k16-a",
        "mma-m16n8k16-b",
        "mma-m16n8k16-c",
        "mma-m16n8k8-a",
        "mma-m16n8k8-b",
        "ldmatrix-x4",
        "ldmatrix-x2-trans",
        "ldmatrix-x4-src",
        "wgmma-m64n32k16-c",
        "wgmma-m64n8k16-a",
        "cp-async-32x64",
        "mma-m16n8k16-b-4warps",
    ] {
        let atom = atoms::tv_by_name(name).unwrap();
        let layout = parse_layout(&atom.cute_notation()).unwrap();
        assert_eq!(
            layout.size(),
            i64::from(atom.threads() * atom.values()),
            "{name}"
        );
        for t in 0..atom.threads() {
            for v in 0..atom.values() {
                let rc = atom.coord(t, v);
                let idx = i64::from(t + atom.threads() * v);
                assert_eq!(
                    layout.call(idx),
                    i64::from(rc.row + atom.rows * rc.col),
                    "{name} t{t} v{v}"
                );
            }
        }
    }
}

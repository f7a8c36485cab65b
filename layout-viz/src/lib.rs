//! layout-viz: CuTe's layout algebra in Rust, the hardware atoms of the tensor-core
//! stages, a shared-memory bank-conflict simulator, and SVG renderers for all of them.
//!
//! The algebra (`int_tuple`, `layout`, `swizzle`, `notation`) mirrors CuTe's semantics
//! (colexicographic coordinates). The atoms and bank maps are driven by the kernels' own
//! `__host__ __device__` index headers through a host build (`kernel_fns`), so a diagram
//! shows what the kernel does.
//!
//! The C++ host build exists only for native targets. Built for `wasm32` (the book's
//! playground, `layout-viz-wasm`), the library is pure Rust: the stage bank patterns and
//! the swizzle figures take layout-viz's own models of the kernels' index functions,
//! which the native tests hold equal to the kernels' (`bank::IndexFns`).

// The algebra.
pub mod int_tuple;
pub mod layout;
pub mod notation;
pub mod swizzle;

// Hardware, simulation and drawing.
pub mod atoms;
pub mod backward;
pub mod backward_tiles;
pub mod bank;
pub mod book;
pub mod figure_size;
pub mod fp8;
pub mod gmma;
#[cfg(not(target_arch = "wasm32"))]
pub mod kernel_fns;
pub mod ops;
pub mod render;
pub mod svg_kit;

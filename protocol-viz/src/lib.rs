//! protocol-viz: small models of the Hopper stages' protocols, checked over every order
//! their actors can take, and the book's figures drawn from them; and the Gantt chart of a
//! measured timeline (`flashlab timeline`).
//!
//! - [`ring`]: stage 10's K/V ring and its mbarriers, waited on by parity;
//! - [`pipeline`]: stage 12's full and empty barriers between producer and consumers;
//! - [`pingpong`]: the named-barrier turns of stages 13 and 16 and stage 16's schedule;
//! - [`decode`]: stage 14's splits, GQA packing and paged cache;
//! - [`timeline`]: a measured timeline as a Gantt chart.
//!
//! What the models share with the kernels, they do not copy: [`kernel_fns`] is the host
//! build (`build.rs`) of the kernels' own headers, the decode index functions of
//! `decode_index.cuh` and the named barriers and counts of `hopper/turns.cuh`. The order
//! of each model's steps is held to the kernels' code by `tests/roles.rs`.
//!
//! The figures use layout-viz's drawing kit (`svg_kit`, `render::color`), so they look
//! like the layout figures beside them; layout-viz itself keeps the algebra, the atoms,
//! the swizzles and the bank maps.

pub mod book;
pub mod decode;
pub mod decode_index;
pub mod kernel_fns;
pub mod pingpong;
pub mod pipeline;
pub mod ring;
pub mod timeline;

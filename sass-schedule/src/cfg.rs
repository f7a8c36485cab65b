//! A function's basic blocks and loops, and the shortest way around a loop.
//!
//! A block starts at the function's first instruction, at every branch target and after
//! every branch or end; its successors come from its last instruction's [`Flow`]. A loop is
//! a natural loop: a back edge is an edge to a block that dominates its source, and the
//! loop is the header with every block that reaches the back edge's source without passing
//! through the header. (ptxas puts a mbarrier wait's retry out of line, after the kernel's
//! end, with a branch back into the loop body; that branch goes backwards in the listing
//! but is not a back edge, since its target does not dominate it.)

use crate::listing::{Flow, Function};
use std::collections::{BTreeSet, HashMap};

/// Instructions `start..end` of the function, one way in, one way out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub start: usize,
    pub end: usize,
    pub successors: Vec<usize>,
}

/// A natural loop: `header` dominates every block of it; `latches` branch back to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    pub header: usize,
    pub latches: Vec<usize>,
    pub blocks: BTreeSet<usize>,
}

/// The control-flow graph of one function.
#[derive(Clone, Debug)]
pub struct Cfg {
    pub blocks: Vec<Block>,
    /// For each block, its immediate dominator (the entry block, 0, is its own).
    /// `usize::MAX` for a block the entry does not reach.
    pub idom: Vec<usize>,
}

impl Cfg {
    pub fn of(f: &Function) -> Self {
        let n = f.instructions.len();
        let index: HashMap<u32, usize> = f
            .instructions
            .iter()
            .enumerate()
            .map(|(i, ins)| (ins.address, i))
            .collect();
        let mut leader = vec![false; n];
        if n > 0 {
            leader[0] = true;
        }
        for (i, ins) in f.instructions.iter().enumerate() {
            match ins.flow() {
                Flow::Next => {}
                Flow::Branch { target, .. } => {
                    if let Some(&t) = index.get(&target) {
                        leader[t] = true;
                    }
                    if i + 1 < n {
                        leader[i + 1] = true;
                    }
                }
                Flow::End { .. } => {
                    if i + 1 < n {
                        leader[i + 1] = true;
                    }
                }
            }
        }
        let starts: Vec<usize> = (0..n).filter(|&i| leader[i]).collect();
        let block_of_start: HashMap<usize, usize> =
            starts.iter().enumerate().map(|(b, &s)| (s, b)).collect();
        let mut blocks = Vec::with_capacity(starts.len());
        for (b, &start) in starts.iter().enumerate() {
            let end = starts.get(b + 1).copied().unwrap_or(n);
            let last = &f.instructions[end - 1];
            let next = (end < n).then(|| block_of_start[&end]);
            let target = |t: u32| index.get(&t).map(|i| block_of_start[i]);
            let successors = match last.flow() {
                Flow::Next => next.into_iter().collect(),
                Flow::Branch {
                    target: t,
                    conditional,
                } => {
                    let mut s: Vec<usize> = target(t).into_iter().collect();
                    if conditional {
                        s.extend(next);
                    }
                    s
                }
                Flow::End { conditional } => {
                    if conditional {
                        next.into_iter().collect()
                    } else {
                        Vec::new()
                    }
                }
            };
            blocks.push(Block {
                start,
                end,
                successors,
            });
        }
        let idom = dominators(&blocks);
        Cfg { blocks, idom }
    }

    /// Whether block `a` dominates block `b`.
    pub fn dominates(&self, a: usize, b: usize) -> bool {
        if self.idom[b] == usize::MAX {
            return false;
        }
        let mut x = b;
        loop {
            if x == a {
                return true;
            }
            if x == 0 {
                return false;
            }
            x = self.idom[x];
        }
    }

    /// Every natural loop, one per header (back edges to the same header merged), in the
    /// order of their headers.
    pub fn loops(&self) -> Vec<Loop> {
        let mut by_header: Vec<(usize, Vec<usize>)> = Vec::new();
        for (u, b) in self.blocks.iter().enumerate() {
            for &v in &b.successors {
                if self.dominates(v, u) {
                    match by_header.iter_mut().find(|(h, _)| *h == v) {
                        Some((_, latches)) => latches.push(u),
                        None => by_header.push((v, vec![u])),
                    }
                }
            }
        }
        by_header.sort_by_key(|(h, _)| *h);
        let predecessors = self.predecessors();
        by_header
            .into_iter()
            .map(|(header, latches)| {
                let mut blocks = BTreeSet::from([header]);
                let mut stack = latches.clone();
                while let Some(x) = stack.pop() {
                    if blocks.insert(x) {
                        stack.extend(predecessors[x].iter().copied());
                    }
                }
                Loop {
                    header,
                    latches,
                    blocks,
                }
            })
            .collect()
    }

    fn predecessors(&self) -> Vec<Vec<usize>> {
        let mut p = vec![Vec::new(); self.blocks.len()];
        for (u, b) in self.blocks.iter().enumerate() {
            for &v in &b.successors {
                p[v].push(u);
            }
        }
        p
    }

    /// The way around `lp` of least weight, as block indices from the header to a latch:
    /// every edge of the loop but the back edges (of it and of the loops inside it), each
    /// block weighted by `weight` (its static cycles, say). An inner loop is then passed
    /// once, without going round it: a mbarrier wait that succeeds at once.
    pub fn lightest_way_around(&self, lp: &Loop, weight: impl Fn(&Block) -> u64) -> Vec<usize> {
        // Blocks of the loop in an order where every forward edge goes later: depth-first
        // post-order from the header, reversed, following no back edge.
        let forward = |u: usize| {
            self.blocks[u]
                .successors
                .iter()
                .copied()
                .filter(move |&v| lp.blocks.contains(&v) && !self.dominates(v, u))
        };
        let mut order = Vec::new();
        let mut seen = BTreeSet::new();
        let mut stack = vec![(lp.header, false)];
        while let Some((u, done)) = stack.pop() {
            if done {
                order.push(u);
                continue;
            }
            if !seen.insert(u) {
                continue;
            }
            stack.push((u, true));
            for v in forward(u) {
                if !seen.contains(&v) {
                    stack.push((v, false));
                }
            }
        }
        order.reverse();
        let mut best: HashMap<usize, (u64, Option<usize>)> = HashMap::new();
        best.insert(lp.header, (weight(&self.blocks[lp.header]), None));
        for &u in &order {
            let Some(&(d, _)) = best.get(&u) else {
                continue;
            };
            for v in forward(u) {
                let dv = d + weight(&self.blocks[v]);
                if best.get(&v).is_none_or(|&(old, _)| dv < old) {
                    best.insert(v, (dv, Some(u)));
                }
            }
        }
        let Some(&end) = lp
            .latches
            .iter()
            .filter(|l| best.contains_key(l))
            .min_by_key(|l| best[l].0)
        else {
            return vec![lp.header];
        };
        let mut path = vec![end];
        while let Some(prev) = best[path.last().unwrap()].1 {
            path.push(prev);
        }
        path.reverse();
        path
    }
}

/// The instructions that wait on a scoreboard no instruction that can run before them sets,
/// as (instruction index, scoreboard). A scoreboard may be pending where some path from the
/// entry passed an instruction setting it (its write or read barrier); ptxas only waits on
/// those, so over a correctly read listing this is empty. (Address order is not enough: a
/// loop's head may wait on a scoreboard set at the bottom of the loop, by the last
/// iteration's store of the register it is about to overwrite.)
pub fn waits_on_unset_scoreboards(f: &Function) -> Vec<(usize, u8)> {
    let cfg = Cfg::of(f);
    let sets = |i: usize| {
        let c = f.instructions[i].control;
        [c.write_barrier, c.read_barrier]
            .into_iter()
            .flatten()
            .fold(0u8, |m, b| m | 1 << b)
    };
    let set_in: Vec<u8> = cfg
        .blocks
        .iter()
        .map(|b| (b.start..b.end).fold(0, |m, i| m | sets(i)))
        .collect();
    let mut entry = vec![0u8; cfg.blocks.len()];
    let mut changed = true;
    while changed {
        changed = false;
        for (u, b) in cfg.blocks.iter().enumerate() {
            let out = entry[u] | set_in[u];
            for &v in &b.successors {
                if entry[v] | out != entry[v] {
                    entry[v] |= out;
                    changed = true;
                }
            }
        }
    }
    let mut bad = Vec::new();
    for (u, b) in cfg.blocks.iter().enumerate() {
        let mut pending = entry[u];
        for i in b.start..b.end {
            for w in f.instructions[i].control.waits_on() {
                if pending >> w & 1 == 0 {
                    bad.push((i, w));
                }
            }
            pending |= sets(i);
        }
    }
    bad
}

/// Immediate dominators by Cooper, Harvey and Kennedy's iteration ("A Simple, Fast
/// Dominance Algorithm", 2001) over a reverse post-order from block 0.
fn dominators(blocks: &[Block]) -> Vec<usize> {
    let n = blocks.len();
    let mut idom = vec![usize::MAX; n];
    if n == 0 {
        return idom;
    }
    // Reverse post-order.
    let mut post = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack = vec![(0usize, 0usize)];
    seen[0] = true;
    while let Some(&mut (u, ref mut k)) = stack.last_mut() {
        if *k < blocks[u].successors.len() {
            let v = blocks[u].successors[*k];
            *k += 1;
            if !seen[v] {
                seen[v] = true;
                stack.push((v, 0));
            }
        } else {
            post.push(u);
            stack.pop();
        }
    }
    let mut rank = vec![usize::MAX; n];
    for (r, &u) in post.iter().enumerate() {
        rank[u] = r;
    }
    let mut preds = vec![Vec::new(); n];
    for (u, b) in blocks.iter().enumerate() {
        for &v in &b.successors {
            preds[v].push(u);
        }
    }
    idom[0] = 0;
    let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
        while a != b {
            while rank[a] < rank[b] {
                a = idom[a];
            }
            while rank[b] < rank[a] {
                b = idom[b];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &u in post.iter().rev().skip(1) {
            let mut new = usize::MAX;
            for &p in &preds[u] {
                if idom[p] == usize::MAX {
                    continue;
                }
                new = if new == usize::MAX {
                    p
                } else {
                    intersect(&idom, p, new)
                };
            }
            if new != usize::MAX && idom[u] != new {
                idom[u] = new;
                changed = true;
            }
        }
    }
    idom
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::{parse_listing, tests::LOOP};

    fn toy() -> (Function, Cfg) {
        let f = parse_listing(LOOP).unwrap().remove(0);
        let cfg = Cfg::of(&f);
        (f, cfg)
    }

    #[test]
    fn blocks_start_at_targets_and_after_branches() {
        let (f, cfg) = toy();
        let starts: Vec<u32> = cfg
            .blocks
            .iter()
            .map(|b| f.instructions[b.start].address)
            .collect();
        assert_eq!(starts, vec![0x00, 0x10, 0x30, 0x60, 0x70, 0x90, 0xa0, 0xc0]);
        // 0x0050's conditional branch: to 0x70, or on to 0x60.
        assert_eq!(cfg.blocks[2].successors, vec![4, 3]);
        // EXIT ends the thread.
        assert!(cfg.blocks[5].successors.is_empty());
    }

    #[test]
    fn the_out_of_line_retry_is_not_a_back_edge_of_the_loop() {
        let (_, cfg) = toy();
        let loops = cfg.loops();
        // The loop 0x10..0x80, and the retry's own two-instruction loop at 0xa0; the branch
        // from 0xc0 back to 0x30 goes backwards but 0x30 does not dominate it.
        assert_eq!(loops.len(), 2);
        assert_eq!(loops[0].header, 1);
        assert_eq!(loops[0].latches, vec![4]);
        assert_eq!(loops[0].blocks, BTreeSet::from([1, 2, 3, 4, 6, 7]));
        assert_eq!(loops[1].header, 6);
        assert!(!cfg.dominates(2, 7));
        assert!(cfg.dominates(1, 7));
    }

    #[test]
    fn every_scoreboard_waited_on_in_the_toy_was_set_on_a_way_there() {
        let (mut f, _) = toy();
        assert!(waits_on_unset_scoreboards(&f).is_empty());
        // The first instruction waiting on scoreboard 3, which nothing sets.
        f.instructions[0].control.wait_mask = 1 << 3;
        assert_eq!(waits_on_unset_scoreboards(&f), vec![(0, 3)]);
    }

    #[test]
    fn the_lightest_way_around_skips_the_rescale_and_the_retry() {
        let (_, cfg) = toy();
        let lp = &cfg.loops()[0];
        let path = cfg.lightest_way_around(lp, |b| (b.end - b.start) as u64);
        assert_eq!(path, vec![1, 2, 4]);
    }
}

//! The coupling graph: connections between participants' ports, the order
//! in which feedthrough asks them to be computed, and the algebraic loops
//! (cycles of connections through outputs that depend directly on inputs).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::submodel::Feedthrough;

/// A port of a participant: its index among the participants and the
/// port's index among its inputs or outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Port {
    pub(crate) model: usize,
    pub(crate) port: usize,
}

/// A connection: output `from` drives input `to` as `scale * from + offset`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Link {
    pub(crate) from: Port,
    pub(crate) to: Port,
    pub(crate) scale: f64,
    pub(crate) offset: f64,
}

/// The participants in an order where each comes after those driving an
/// input of it that some of its outputs depend on directly; ties, and
/// cycles, are broken by the participants' order in the file.
pub(crate) fn order(feedthrough: &[&Feedthrough], links: &[Link]) -> Vec<usize> {
    let n = feedthrough.len();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut waiting = vec![0usize; n];
    for l in links {
        if l.from.model != l.to.model && feedthrough[l.to.model].feeds_through(l.to.port) {
            users[l.from.model].push(l.to.model);
            waiting[l.to.model] += 1;
        }
    }
    let mut ready: BinaryHeap<Reverse<usize>> = (0..n).filter(|&m| waiting[m] == 0).map(Reverse).collect();
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        let next = match ready.pop() {
            Some(Reverse(m)) if !placed[m] => m,
            Some(_) => continue,
            // A cycle: the first participant not placed goes next.
            None => (0..n).find(|&m| !placed[m]).unwrap_or_default(),
        };
        placed[next] = true;
        order.push(next);
        for &u in &users[next] {
            waiting[u] -= 1;
            if waiting[u] == 0 && !placed[u] {
                ready.push(Reverse(u));
            }
        }
    }
    order
}

/// The first algebraic loop, as the connections on it in the order the
/// values flow: connection `k` drives an input of a participant that an
/// output driving connection `k + 1` depends on directly, and the last
/// leads back to the first.
pub(crate) fn algebraic_loop(feedthrough: &[&Feedthrough], links: &[Link]) -> Option<Vec<usize>> {
    let mut leaving: Vec<Vec<usize>> = vec![Vec::new(); feedthrough.len()];
    for (k, l) in links.iter().enumerate() {
        leaving[l.from.model].push(k);
    }
    // Connection `a` leads to connection `b` when the output `b` reads
    // depends directly on the input `a` drives.
    let next = |a: usize| {
        let to = links[a].to;
        leaving[to.model]
            .iter()
            .copied()
            .filter(move |&b| feedthrough[to.model].inputs_of(links[b].from.port).contains(&to.port))
    };
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut mark = vec![Mark::New; links.len()];
    for start in 0..links.len() {
        if mark[start] != Mark::New {
            continue;
        }
        // Depth-first, the path kept with how far each node's successors
        // have been gone through.
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        mark[start] = Mark::OnPath;
        while let Some(&mut (a, ref mut gone)) = path.last_mut() {
            match next(a).nth(*gone) {
                Some(b) => {
                    *gone += 1;
                    match mark[b] {
                        Mark::OnPath => {
                            let from = path.iter().position(|&(k, _)| k == b).unwrap_or_default();
                            return Some(path[from..].iter().map(|&(k, _)| k).collect());
                        }
                        Mark::New => {
                            mark[b] = Mark::OnPath;
                            path.push((b, 0));
                        }
                        Mark::Done => {}
                    }
                }
                None => {
                    mark[a] = Mark::Done;
                    path.pop();
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(from: (usize, usize), to: (usize, usize)) -> Link {
        Link {
            from: Port {
                model: from.0,
                port: from.1,
            },
            to: Port {
                model: to.0,
                port: to.1,
            },
            scale: 1.0,
            offset: 0.0,
        }
    }

    #[test]
    fn feedthrough_orders_the_participants_and_closes_loops_only_through_dependent_ports() {
        // 0: y0 = state, fed by u0. 1: y0 = f(u0) (feedthrough), y1 = state.
        let a = Feedthrough::from_lists(1, vec![vec![]]).unwrap();
        let b = Feedthrough::from_lists(1, vec![vec![0], vec![]]).unwrap();
        let links = [link((1, 0), (0, 0)), link((0, 0), (1, 0))];
        assert_eq!(order(&[&b, &a], &[link((0, 0), (1, 0))]), vec![0, 1]);
        assert_eq!(order(&[&a, &b], &links), vec![0, 1]);
        assert_eq!(algebraic_loop(&[&a, &b], &links), None);
        // Both outputs direct: a loop through both connections.
        let a = Feedthrough::from_lists(1, vec![vec![0]]).unwrap();
        assert_eq!(algebraic_loop(&[&a, &b], &links), Some(vec![0, 1]));
        assert_eq!(order(&[&a, &b], &links), vec![0, 1]);
        // Reading b's second output (a state) breaks it.
        let links = [link((1, 1), (0, 0)), link((0, 0), (1, 0))];
        assert_eq!(algebraic_loop(&[&a, &b], &links), None);
        assert_eq!(order(&[&a, &b], &links), vec![0, 1]);
        assert_eq!(order(&[&b, &a], &[link((1, 0), (0, 0))]), vec![1, 0]);
    }
}

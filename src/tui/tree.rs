//! The browse tree: dimension → category → sub-task, flattened into visible rows.
//!
//! Each node covers a contiguous range of `Dataset::items` (tasks are stored in tree order), so
//! selecting a node selects a slice of items with no copying. A hand-rolled tree (rather than
//! tui-tree-widget) because rows need per-node counts, colours, run progress and rates,
//! and clicks must map to rows without the widget's internal state.

use std::collections::HashSet;
use std::ops::Range;

use crate::dataset::Dataset;
use crate::taxonomy::{CATEGORIES, Dimension, category_index};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeId {
    Dim(Dimension),
    /// Index into `taxonomy::CATEGORIES`.
    Cat(usize),
    /// Index into `Dataset::tasks`.
    Task(usize),
}

#[derive(Debug, Clone)]
pub struct Node {
    pub id: NodeId,
    pub depth: u8,
    pub items: Range<usize>,
    pub children: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Tree {
    /// All nodes; roots are listed in `roots`.
    pub nodes: Vec<Node>,
    pub roots: Vec<usize>,
    pub expanded: HashSet<NodeId>,
    /// Node indices in display order, given what is expanded.
    pub visible: Vec<usize>,
}

impl Tree {
    pub fn new(ds: &Dataset) -> Tree {
        let mut nodes: Vec<Node> = Vec::new();
        let mut roots = Vec::new();
        for d in Dimension::ALL {
            let dim_tasks: Vec<usize> = (0..ds.tasks.len())
                .filter(|&t| ds.tasks[t].dimension == d)
                .collect();
            if dim_tasks.is_empty() {
                continue;
            }
            let dim_idx = nodes.len();
            nodes.push(Node {
                id: NodeId::Dim(d),
                depth: 0,
                items: span(ds, &dim_tasks),
                children: Vec::new(),
            });
            roots.push(dim_idx);
            for (ci, cat) in CATEGORIES.iter().enumerate() {
                if cat.dimension != d {
                    continue;
                }
                let cat_tasks: Vec<usize> = dim_tasks
                    .iter()
                    .copied()
                    .filter(|&t| category_index(ds.tasks[t].category) == ci)
                    .collect();
                if cat_tasks.is_empty() {
                    continue;
                }
                let cat_idx = nodes.len();
                nodes.push(Node {
                    id: NodeId::Cat(ci),
                    depth: 1,
                    items: span(ds, &cat_tasks),
                    children: Vec::new(),
                });
                nodes[dim_idx].children.push(cat_idx);
                for t in cat_tasks {
                    let ti = nodes.len();
                    nodes.push(Node {
                        id: NodeId::Task(t),
                        depth: 2,
                        items: ds.tasks[t].items.clone(),
                        children: Vec::new(),
                    });
                    nodes[cat_idx].children.push(ti);
                }
            }
        }
        let mut tree = Tree {
            nodes,
            roots,
            expanded: HashSet::new(),
            visible: Vec::new(),
        };
        tree.rebuild();
        tree
    }

    /// Recomputes the visible rows after expanding or collapsing.
    pub fn rebuild(&mut self) {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut stack: Vec<usize> = self.roots.iter().rev().copied().collect();
        while let Some(n) = stack.pop() {
            out.push(n);
            if self.expanded.contains(&self.nodes[n].id) {
                stack.extend(self.nodes[n].children.iter().rev());
            }
        }
        self.visible = out;
    }

    pub fn is_expanded(&self, n: usize) -> bool {
        self.expanded.contains(&self.nodes[n].id)
    }

    pub fn has_children(&self, n: usize) -> bool {
        !self.nodes[n].children.is_empty()
    }

    pub fn set_expanded(&mut self, n: usize, open: bool) {
        let id = self.nodes[n].id;
        if open && self.has_children(n) {
            self.expanded.insert(id);
        } else {
            self.expanded.remove(&id);
        }
        self.rebuild();
    }

    pub fn all_expanded(&self) -> bool {
        self.nodes
            .iter()
            .filter(|n| !n.children.is_empty())
            .all(|n| self.expanded.contains(&n.id))
    }

    pub fn expand_all(&mut self, open: bool) {
        if open {
            self.expanded = self
                .nodes
                .iter()
                .filter(|n| !n.children.is_empty())
                .map(|n| n.id)
                .collect();
        } else {
            self.expanded.clear();
        }
        self.rebuild();
    }

    /// The parent of a node, if any.
    pub fn parent(&self, n: usize) -> Option<usize> {
        self.nodes.iter().position(|p| p.children.contains(&n))
    }

    /// The task indices under a node (itself, for a task node).
    pub fn tasks_under(&self, n: usize) -> Vec<usize> {
        match self.nodes[n].id {
            NodeId::Task(t) => vec![t],
            _ => self.nodes[n]
                .children
                .iter()
                .flat_map(|&c| self.tasks_under(c))
                .collect(),
        }
    }

    /// Opens the path to the task node of `task` and returns its visible row.
    pub fn reveal_task(&mut self, task: usize) -> Option<usize> {
        let node = self.nodes.iter().position(|n| n.id == NodeId::Task(task))?;
        let mut p = self.parent(node);
        while let Some(pn) = p {
            self.expanded.insert(self.nodes[pn].id);
            p = self.parent(pn);
        }
        self.rebuild();
        self.visible.iter().position(|&v| v == node)
    }
}

/// The item range covering several tasks that are adjacent in the dataset.
fn span(ds: &Dataset, tasks: &[usize]) -> Range<usize> {
    let start = tasks
        .iter()
        .map(|&t| ds.tasks[t].items.start)
        .min()
        .unwrap_or(0);
    let end = tasks
        .iter()
        .map(|&t| ds.tasks[t].items.end)
        .max()
        .unwrap_or(start);
    start..end
}

//! The screens, one file each. Adding one: a file implementing
//! [`Component`](super::component::Component), its name in
//! [`ScreenId`](super::screen_id::ScreenId), and, if other screens open it, an arm in
//! [`Open`](super::component::Open) built here.

mod browse;
mod compare;
mod heatmap;

pub use browse::{Browse, Focus, Search, find_matches, item_detail};
pub use compare::Compare;
pub use heatmap::{Drill, Heatmap};

use super::component::{Component, Open};

/// Builds a screen another one asked for.
pub fn open(o: Open) -> Box<dyn Component> {
    match o {
        Open::Compare { items, pos } => Box::new(Compare::new(items, pos)),
        Open::Heatmap => Box::new(Heatmap::default()),
    }
}

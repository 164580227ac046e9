//! The screens, one file each. Adding one: a file implementing
//! [`Component`](super::component::Component) and an arm in
//! [`ScreenId`](super::component::ScreenId).

mod browse;
mod compare;
mod heatmap;

pub use browse::{Browse, Focus, Search, find_matches, item_detail};
pub use compare::Compare;
pub use heatmap::{Drill, Heatmap};

pub mod mock;
pub mod screen;

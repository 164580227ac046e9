pub mod mock;
pub mod pg;
pub mod screen;

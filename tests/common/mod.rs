pub mod mock;
pub mod pg;
pub mod screen;
pub mod tmux;

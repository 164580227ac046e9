pub mod answers;
pub mod mock;
pub mod pg;
pub mod rows;
pub mod screen;
pub mod tmux;

//! A local mock LLM server speaking the OpenAI, Anthropic and Gemini streaming APIs, for trying
//! the TUI and the CLI without network or keys. The model id picks a behaviour (`echo`, `slow`,
//! `flaky429`, `flaky500`, `drop`, `stall`, `always500`; see tests/common/mock.rs).
//!
//! `cargo run --example mock_server -- 18080`, then point a model at http://127.0.0.1:18080/v1.

#[path = "../tests/common/mock.rs"]
mod mock;

#[tokio::main]
async fn main() {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(18080);
    let m = mock::start_on(port, false).await;
    eprintln!("mock LLM server on {}", m.url());
    std::future::pending::<()>().await;
}

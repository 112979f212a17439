"""GitHub Copilot as a provider: `CopilotChat` over the endpoint Copilot lists for each model, its
token exchange, editor headers and model list, and the GitHub sign-in and tokens behind them."""

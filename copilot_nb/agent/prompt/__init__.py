"""What the model is told: our system prompt (`system`), per model family (`families`), the
user's instruction files (`instructions`), `@` references attached (`references`), and the
request put together from them (`assembly`)."""

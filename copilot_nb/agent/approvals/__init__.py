"""Who may let a tool run, and how they are asked: the allow / ask / deny policy (`policy`), the
files an edit targets (`edit_targets`), the `Approver` protocol surfaces implement (`approver`),
the model's own questions to the user (`ask_user`) and answers kept in a cassette (`cassette`)."""

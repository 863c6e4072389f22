"""Reading a trained model: what its heads attend to, what they move, and what each layer predicts."""

"""The app's tabs: one module each, building its components and wiring them to `transformer` and `visualize`."""

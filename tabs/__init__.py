"""The app's tabs: one module or package each (attention/ and train/ are packages), building its components and wiring
them to `transformer`, `visualize`, the store and the widgets. A tab never imports server/ (nor server/ a tab)."""

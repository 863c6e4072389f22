"""The server's protection: what a call may carry and how many may wait (admission, http_gate), the sessions gradio
keeps (session_state), the order those are installed in (guard), and the check at start that the gradio internals
they patch are still there (compat). Imports the store, never a tab."""

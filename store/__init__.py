"""What the server keeps and where it runs: the shipped and trained models (catalogue, user_models), the sessions'
keys and runs (sessions), who a client is (clients), exported files and the disk they use (exports, disk), freed
memory (memory), the one device rule (gpu) and the record cache. No gradio here, and no import of server/ or tabs/."""

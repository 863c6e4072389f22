"""The app's gradio building blocks shared by every tab: checked controls (controls), how listeners of a shared
trigger run (ui) and how a handler's error reaches the page (errors)."""

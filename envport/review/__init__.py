"""Reading a run back: its transcript as iterations (`envport review`, and the HTML report)."""

"""Video: the in-app recorder (F9, F12) and the offline renderer of `tumble record`."""

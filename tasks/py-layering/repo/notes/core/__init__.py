"""Low-level building blocks of notes: file storage and the word index."""

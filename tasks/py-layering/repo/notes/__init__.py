"""A small note-taking app: notes are text files in one folder, searchable by word.

Layers, from high to low: notes.cli (command line) -> notes.app (the application) -> notes.core (storage and
search, the building blocks).
"""

__version__ = "0.4.0"

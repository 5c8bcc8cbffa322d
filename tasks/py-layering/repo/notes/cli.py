"""Command line: `python -m notes.cli --root DIR add|show|rm|ls|search ...`."""

from __future__ import annotations

import argparse
import sys

from notes.app import NoteNotFound, NotesApp

DEFAULT_LIMIT = 5  # search results shown when --limit is not given


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="notes")
    parser.add_argument("--root", required=True, help="folder holding the notes")
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add")
    add.add_argument("title")
    add.add_argument("body")
    commands.add_parser("show").add_argument("title")
    commands.add_parser("rm").add_argument("title")
    commands.add_parser("ls")
    search = commands.add_parser("search")
    search.add_argument("query")
    search.add_argument("--limit", type=int, default=None)
    args = parser.parse_args(argv)

    app = NotesApp(args.root)
    try:
        if args.command == "add":
            print(app.add(args.title, args.body))
        elif args.command == "show":
            print(app.get(args.title))
        elif args.command == "rm":
            app.remove(args.title)
        elif args.command == "ls":
            for key in app.titles():
                print(key)
        else:
            for key in app.search(args.query, args.limit):
                print(key)
    except NoteNotFound as error:
        print(f"notes: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

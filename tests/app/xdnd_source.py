"""A real XDND drag source (python-xlib) for the window tests: drops files on an X window.

    python xdnd_source.py WINDOW_ID X Y FILE… [--types N]

Speaks the drag source's side of XDND v5 (freedesktop.org XDND spec): XdndEnter, XdndPosition
at window pixel (X, Y) (top-left origin), XdndDrop once the target answers XdndStatus, then
serves the ``text/uri-list`` selection the target asks for. ``--types N`` offers N types: with
N ≤ 3 they go inline in XdndEnter (bit 0 of data.l[1] clear — what GTK sources do, and what
crashed pyglet 2.1.19), with N > 3 in the source window's XdndTypeList property (bit 0 set).
Exits 0 once the payload was sent (or XdndFinished came back), 1 on a time-out.
"""

import argparse
import sys
import time
from pathlib import Path

from Xlib import X, Xatom, display
from Xlib.protocol import event

VERSION = 5
OTHER_TYPES = ("text/plain", "UTF8_STRING", "text/x-moz-url", "x-special/gnome-copied-files")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("window", type=lambda s: int(s, 0), help="target window id")
    parser.add_argument("x", type=int)
    parser.add_argument("y", type=int)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--types", type=int, default=2, help="types offered (default 2)")
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args()

    d = display.Display()
    atom = d.intern_atom
    root = d.screen().root
    target = d.create_resource_object("window", args.window)
    source = root.create_window(0, 0, 1, 1, 0, X.CopyFromParent)
    uri_list = atom("text/uri-list")
    types = ([atom(t) for t in OTHER_TYPES] + [uri_list])[-args.types:]  # uri-list last
    inline = len(types) <= 3
    if not inline:
        source.change_property(atom("XdndTypeList"), Xatom.ATOM, 32, types)
    payload = "".join(Path(f).absolute().as_uri() + "\r\n" for f in args.files).encode()
    source.set_selection_owner(atom("XdndSelection"), X.CurrentTime)
    origin = target.translate_coords(root, 0, 0)  # minus the window's position on the root
    root_x, root_y = args.x - origin.x, args.y - origin.y

    def send(kind: str, data: list[int]) -> None:
        message = event.ClientMessage(window=target, client_type=atom(kind),
                                      data=(32, (data + [0] * 5)[:5]))
        target.send_event(message, event_mask=0)
        d.flush()

    flags = (VERSION << 24) | (0 if inline else 1)
    send("XdndEnter", [source.id, flags] + (types if inline else types[:3]))
    send("XdndPosition", [source.id, 0, (root_x << 16) | root_y, X.CurrentTime,
                          atom("XdndActionCopy")])
    dropped = False
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        while d.pending_events():
            e = d.next_event()
            if e.type == X.ClientMessage and e.client_type == atom("XdndStatus") and not dropped:
                if not e.data[1][1] & 1:
                    print("target refused the drop", file=sys.stderr)
                    return 1
                send("XdndDrop", [source.id, 0, X.CurrentTime])
                dropped = True
            elif e.type == X.SelectionRequest:
                e.requestor.change_property(e.property, e.target, 8, payload)
                e.requestor.send_event(event.SelectionNotify(
                    time=e.time, requestor=e.requestor, selection=e.selection, target=e.target,
                    property=e.property))
                d.sync()  # a round trip: Xvfb may drop requests of a client that quits at once
                time.sleep(0.2)  # let the target read the property before the source goes
                return 0
            elif e.type == X.ClientMessage and e.client_type == atom("XdndFinished"):
                return 0
        time.sleep(0.01)
    print(f"time-out; dropped={dropped}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())

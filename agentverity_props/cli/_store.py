"""``agentverity-props store``: look into, export and merge record/replay stores.

A store is what ``--store`` accepts: a SQLite path, a ``.jsonl`` export, or a
``redis://host:port/db?namespace=team`` URL. ``export`` writes a portable file (JSON Lines,
or a new SQLite file) that ``--store FILE --replay`` replays; ``merge`` copies stores into
one without losing or overwriting a draw.
"""

from __future__ import annotations

from typing import Any

import click


def _source(spec: str) -> Any:
    from ..store import open_store
    return open_store(spec, mode="replay")


@click.group("store")
def store_cmd() -> None:
    """Inspect, export and merge record/replay stores (SQLite, .jsonl, redis://)."""


@store_cmd.command("info")
@click.argument("store", metavar="STORE")
def info_cmd(store: str) -> None:
    """Draws per runner namespace and agent in STORE."""
    from .._internal.shown import visible

    with _source(store) as src:
        per: dict[tuple[str, str], list[int]] = {}
        for row in src.rows():
            counts = per.setdefault((row.namespace, row.agent), [0, 0])
            counts[0 if row.ok else 1] += 1
        click.echo(f"{visible(src.location)}: {sum(a + b for a, b in per.values())} draw(s)")
        for (ns, agent), (ok, failed) in sorted(per.items()):
            click.echo(f"  runner {visible(ns) or '(default)'}  agent {visible(agent)}: "
                       f"{ok} answered, {failed} failed")


@store_cmd.command("export")
@click.argument("store", metavar="STORE")
@click.argument("out", metavar="OUT", type=click.Path(dir_okay=False))
def export_cmd(store: str, out: str) -> None:
    """Write every draw of STORE to OUT: JSON Lines if OUT ends in .jsonl, else a new SQLite
    store. Either replays with `--store OUT --replay` (a CI artifact, for instance)."""
    from .._internal.shown import visible
    from ..store import export_store

    with _source(store) as src:
        n = export_store(src, out)
    click.echo(f"exported {n} draw(s) from {visible(src.location)} to {visible(out)}")


@store_cmd.command("merge")
@click.argument("dest", metavar="DEST")
@click.argument("sources", metavar="SOURCE...", nargs=-1, required=True)
def merge_cmd(dest: str, sources: tuple[str, ...]) -> None:
    """Copy every draw of each SOURCE into DEST (a SQLite path, created if absent, or a
    redis:// URL). Draws already there are skipped; a runner namespace whose draws collide
    with different ones in DEST is copied under a new name, so no draw is lost."""
    from .._internal.shown import visible
    from ..store import merge_stores, open_store

    if dest in sources:
        from ..errors import BadInput
        raise BadInput(f"{dest} is both the destination and a source",
                       "merge into a new store")
    if str(dest).endswith(".jsonl"):
        from ..errors import BadInput
        raise BadInput(f"{dest}: a .jsonl export is written whole, not merged into",
                       "merge into a SQLite path, then `store export` it to .jsonl")
    opened = [_source(s) for s in sources]
    try:
        with open_store(dest, mode="auto") as out:
            report = merge_stores(out, opened)
            total = out.count()
    finally:
        for s in opened:
            s.close()
    click.echo(f"merged {len(opened)} store(s) into {visible(out.location)}: {report.line()}; "
               f"{total} draw(s) in it now")

"""The web layer: `buflab serve`, a page on this machine that drives a running experiment
(the control panel of thesis ch. 4.3, Fig 4.15).

- `catalogue`: what the page may load: the file given on the command line and the shipped
  examples and recipes, by id; never a path from the page.
- `experiment`: the one experiment a server runs, shared by every viewer: the live session
  (`buflab.engine.live`), its pace against the wall clock, its controls checked and applied,
  the readings it streams, and who controls it.
- `server`: the HTTP and WebSocket front (aiohttp): the page, its static files, the
  WebSocket protocol, the replay file to download.
- `static/`: the page (HTML, CSS, JavaScript); its charting library, uPlot, is installed from
  npm by `scripts/setup` into `static/vendor/`, never committed.

It stands above the experiments (it uses the rules of thumb of `buflab.experiments.sizing`
and the recipes) and below the command line, which starts it.
"""

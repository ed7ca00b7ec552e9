"""Hook entry scripts, one per event, run by Claude Code as ``python -I -S <script>``.

Each script puts the directory that holds the ``ctxmode`` package on ``sys.path``
(``-I`` drops the script's own directory and ``-S`` site-packages, which keeps stray
``.pth`` files and slow start-up hooks out) and calls :func:`ctxmode.hookrun.main`.
"""

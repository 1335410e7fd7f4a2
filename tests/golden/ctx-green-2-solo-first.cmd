report --color never tests/verdicts/ctx-green-2-solo-first

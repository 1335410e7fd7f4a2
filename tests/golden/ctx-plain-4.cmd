report --color never --baseline tests/verdicts/solo-spin tests/verdicts/ctx-plain-4

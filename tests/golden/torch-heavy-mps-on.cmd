report --color never --baseline tests/verdicts/solo-torch-heavy tests/verdicts/torch-heavy-mps-on

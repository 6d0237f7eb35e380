from mtplint.cli import run

run()

from viewfinder.cli.app import main

main()

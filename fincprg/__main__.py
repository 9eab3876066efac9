from fincprg.cli import main

main()

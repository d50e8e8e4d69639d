from framebench.cli import main

main()

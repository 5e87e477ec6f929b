module relgraph

go 1.19

"""What several experiments share (seed aggregation, rank views of run directories, data settings
and loading, devices); no experiment imports another."""

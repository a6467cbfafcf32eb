"""What several experiments share (seed aggregation, ...); no experiment imports another."""

"""Anchor targets and region proposals: contrib.MultiBoxTarget, contrib.Proposal, contrib.MultiProposal."""

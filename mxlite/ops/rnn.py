"""The fused recurrent operator RNN (rnn_relu, rnn_tanh, lstm, gru) with MXNet's packed parameter layout."""

"""An IMPALA learner's loss as Acme writes it (deepmind/acme, acme/agents/jax/impala/learning.py: loss_fn) over
rlax's V-trace (google-deepmind/rlax, rlax/_src/vtrace.py: vtrace, vtrace_td_error_and_advantage), importance
ratios (rlax/_src/distributions.py: categorical_importance_sampling_ratios) and the policy-gradient and entropy
losses (rlax/_src/policy_gradients.py), transcribed small: one sequence, the network stubbed as a small MLP with
policy and value heads, the behaviour logits and the trajectory passed in as data."""

import collections

import jax
import jax.numpy as jnp

VTraceOutput = collections.namedtuple('vtrace_output', ['errors', 'pg_advantage', 'q_estimate'])


def batched_index(values, indices, keepdims=False):
  indices = jnp.asarray(indices)
  one_hot_indices = jax.nn.one_hot(indices, values.shape[-1], dtype=values.dtype)
  return jnp.sum(values * one_hot_indices, axis=-1, keepdims=keepdims)


def softmax_logprob(sample, logits, temperature=1.):
  logprobs = jax.nn.log_softmax(logits / temperature)
  return batched_index(logprobs, sample)


def softmax_entropy(logits, temperature=1.):
  probs = jax.nn.softmax(logits / temperature)
  logprobs = jax.nn.log_softmax(logits / temperature)
  return -jnp.nansum(probs * logprobs, axis=-1)


def categorical_importance_sampling_ratios(pi_logits_t, mu_logits_t, a_t):
  log_pi_a_t = softmax_logprob(a_t, pi_logits_t)
  log_mu_a_t = softmax_logprob(a_t, mu_logits_t)
  rho_t = jnp.exp(log_pi_a_t - log_mu_a_t)
  return rho_t


def vtrace(v_tm1, v_t, r_t, discount_t, rho_tm1, lambda_=1.0, clip_rho_threshold=1.0,
           stop_target_gradients=True):
  # Clip importance sampling ratios.
  c_tm1 = jnp.minimum(1.0, rho_tm1) * lambda_
  clipped_rhos_tm1 = jnp.minimum(clip_rho_threshold, rho_tm1)

  # Compute the temporal difference errors.
  td_errors = clipped_rhos_tm1 * (r_t + discount_t * v_t - v_tm1)

  # Work backwards computing the td-errors.
  def _body(acc, xs):
    td_error, discount, c = xs
    acc = td_error + discount * c * acc
    return acc, acc

  _, errors = jax.lax.scan(
      _body, 0.0, (td_errors, discount_t, c_tm1), reverse=True)

  # Return errors, maybe disabling gradient flow through bootstrap targets.
  return jax.lax.select(
      stop_target_gradients,
      jax.lax.stop_gradient(errors + v_tm1) - v_tm1,
      errors)


def vtrace_td_error_and_advantage(v_tm1, v_t, r_t, discount_t, rho_tm1, lambda_=1.0, clip_rho_threshold=1.0,
                                  clip_pg_rho_threshold=1.0, stop_target_gradients=True):
  lambda_ = jnp.ones_like(discount_t) * lambda_
  errors = vtrace(
      v_tm1, v_t, r_t, discount_t, rho_tm1,
      lambda_, clip_rho_threshold, stop_target_gradients)
  targets_tm1 = errors + v_tm1
  q_bootstrap = jnp.concatenate([
      lambda_[:-1] * targets_tm1[1:] + (1 - lambda_[:-1]) * v_tm1[1:],
      v_t[-1:],
  ], axis=0)
  q_estimate = r_t + discount_t * q_bootstrap
  clipped_pg_rho_tm1 = jnp.minimum(clip_pg_rho_threshold, rho_tm1)
  pg_advantages = clipped_pg_rho_tm1 * (q_estimate - v_tm1)
  return VTraceOutput(
      errors=errors, pg_advantage=pg_advantages, q_estimate=q_estimate)


def policy_gradient_loss(logits_t, a_t, adv_t, w_t, use_stop_gradient=True):
  log_pi_a_t = softmax_logprob(a_t, logits_t)
  adv_t = jax.lax.select(use_stop_gradient, jax.lax.stop_gradient(adv_t), adv_t)
  loss_per_timestep = -log_pi_a_t * adv_t
  return jnp.mean(loss_per_timestep * w_t)


def entropy_loss(logits_t, w_t):
  entropy_per_timestep = softmax_entropy(logits_t)
  return -jnp.mean(entropy_per_timestep * w_t)


def network(params, observations):
  h = jnp.tanh(observations @ params["torso"])
  return h @ params["policy"], jnp.squeeze(h @ params["value"], -1)


def loss_fn(params, observations, actions, rewards, discounts, behaviour_logits,
            discount=0.99, baseline_cost=0.5, entropy_cost=0.01):
  # Unroll current policy over observations.
  logits, values = network(params, observations)

  # Apply reward clipping.
  rewards = jnp.clip(rewards, -1, 1)

  # Compute importance sampling weights: current policy / behavior policy.
  rhos = categorical_importance_sampling_ratios(logits[:-1], behaviour_logits[:-1], actions[:-1])

  # Critic loss.
  vtrace_returns = vtrace_td_error_and_advantage(
      v_tm1=values[:-1],
      v_t=values[1:],
      r_t=rewards[:-1],
      discount_t=discounts[:-1] * discount,
      rho_tm1=rhos)
  critic_loss = jnp.square(vtrace_returns.errors)

  # Policy gradient loss.
  policy_gradient_loss_ = policy_gradient_loss(
      logits_t=logits[:-1],
      a_t=actions[:-1],
      adv_t=vtrace_returns.pg_advantage,
      w_t=jnp.ones_like(rewards[:-1]))

  # Entropy regulariser.
  entropy_loss_ = entropy_loss(logits[:-1], jnp.ones_like(rewards[:-1]))

  # Combine weighted sum of actor & critic losses, averaged over the sequence.
  mean_loss = jnp.mean(policy_gradient_loss_ + baseline_cost * critic_loss + entropy_cost * entropy_loss_)
  return mean_loss


def example():
  k = jax.random.split(jax.random.PRNGKey(5), 6)
  params = {"torso": jax.random.normal(k[0], (3, 4)), "policy": jax.random.normal(k[1], (4, 3)) * 0.5,
            "value": jax.random.normal(k[2], (4, 1)) * 0.5}
  observations = jax.random.normal(k[3], (5, 3))
  return (params, observations, jnp.array([0, 2, 1, 1, 0]), 1.5 * jax.random.normal(k[4], (5,)),
          jnp.array([1.0, 1.0, 0.0, 1.0, 1.0]), jax.random.normal(k[5], (5, 3)))

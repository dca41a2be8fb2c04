// Sign in (POST /v2/auth/login) and sign up (POST /v2/auth/signup). Both answer a session whose
// token the console keeps; a sign-up for an address held by an unproven account answers 202
// instead (a link was e-mailed, no account yet), which the page says.
import { useState } from 'react';
import { Link, Navigate, useNavigate, useSearchParams } from 'react-router';
import { fp, queryClient, useWrite } from '../api.ts';
import { Field, formValues, Problem, Submit } from '../components/Form.tsx';
import { setToken, useToken } from '../session.ts';

/** Where to go once signed in: the page that asked, if it is one of the console's. */
function useNext() {
  const [params] = useSearchParams();
  const next = params.get('next') ?? '';
  return next.startsWith('/console') ? next : '/console';
}

function useSignedIn() {
  const navigate = useNavigate();
  const next = useNext();
  return (session: { access_token: string }) => {
    queryClient.clear();
    setToken(session.access_token);
    navigate(next, { replace: true });
  };
}

export function SignIn() {
  const token = useToken();
  const next = useNext();
  const signedIn = useSignedIn();
  const login = useWrite((body: { email: string; password: string }) =>
    fp().call(fp().api.POST('/v2/auth/login', { body })),
  );
  if (token) return <Navigate to={next} replace />;
  return (
    <main className="narrow" id="content">
      <p className="brand">Frameplane</p>
      <h1>Sign in</h1>
      <form
        className="stack"
        onSubmit={(e) => {
          const v = formValues(e);
          login.mutate(
            { email: v.email ?? '', password: v.password ?? '' },
            { onSuccess: signedIn },
          );
        }}
      >
        <Field
          label="E-mail"
          name="email"
          type="email"
          autoComplete="username"
          required
          error={login.error}
        />
        <Field
          label="Password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          error={login.error}
        />
        <Problem error={login.error} fields={['email', 'password']} />
        <Submit busy={login.isPending}>Sign in</Submit>
      </form>
      <p>
        New to Frameplane?{' '}
        <Link to={`/console/sign-up?next=${encodeURIComponent(next)}`}>Create an account</Link>
      </p>
    </main>
  );
}

export function SignUp() {
  const token = useToken();
  const next = useNext();
  const signedIn = useSignedIn();
  const [sentTo, setSentTo] = useState<string>();
  const signup = useWrite((body: { email: string; password: string; name?: string }) =>
    fp().call(fp().api.POST('/v2/auth/signup', { body })),
  );
  if (token) return <Navigate to={next} replace />;
  if (sentTo)
    return (
      <main className="narrow" id="content">
        <h1>Check your mailbox</h1>
        <p role="status">
          We sent a link to <strong>{sentTo}</strong>. Follow it to confirm the address; your
          account is created then.
        </p>
      </main>
    );
  return (
    <main className="narrow" id="content">
      <p className="brand">Frameplane</p>
      <h1>Create your account</h1>
      <form
        className="stack"
        onSubmit={(e) => {
          const v = formValues(e);
          const body = {
            email: v.email ?? '',
            password: v.password ?? '',
            ...(v.name ? { name: v.name } : {}),
          };
          signup.mutate(body, {
            onSuccess: (answer) =>
              'access_token' in answer ? signedIn(answer) : setSentTo(answer.email),
          });
        }}
      >
        <Field
          label="Your name (optional)"
          name="name"
          autoComplete="name"
          maxLength={100}
          error={signup.error}
        />
        <Field
          label="E-mail"
          name="email"
          type="email"
          autoComplete="username"
          required
          error={signup.error}
        />
        <Field
          label="Password"
          name="password"
          type="password"
          autoComplete="new-password"
          required
          minLength={10}
          hint="At least 10 characters."
          error={signup.error}
        />
        <Problem error={signup.error} fields={['name', 'email', 'password']} />
        <Submit busy={signup.isPending}>Create account</Submit>
      </form>
      <p>
        Already have an account?{' '}
        <Link to={`/console/sign-in?next=${encodeURIComponent(next)}`}>Sign in</Link>
      </p>
    </main>
  );
}
